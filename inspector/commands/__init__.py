"""Commands of the packscope CLI, one module each."""
