"""``python -m dabench_analysis.synthetic [OUT_DIR]``: regenerate the sample runs."""

import sys

from dabench_analysis.synthetic import generate_sample_runs

if __name__ == "__main__":
    for path in generate_sample_runs(sys.argv[1] if len(sys.argv) > 1 else "data/sample_runs"):
        print(path)
