"""LLM judging as plain functions: runs, the judging step, and the agreement and estimate read-outs."""
