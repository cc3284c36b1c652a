"""packscope's benchmarks (`packscope bench`)."""
