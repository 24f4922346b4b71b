"""dabench-analysis: analysis toolkit for eval-v2 runs of LLM data agents."""

__version__ = "0.1.0"
