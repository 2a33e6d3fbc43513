"""Answering from sources: question intent, evidence, the citation checker, the chain."""
