"""Evaluation: questions, metrics, the runner, the LangChain-tutorial baseline."""
