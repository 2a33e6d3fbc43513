"""Answering: question intent, evidence, the citation checker, the chain."""
