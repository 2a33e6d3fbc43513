"""Language models: embedded llama.cpp, OpenAI-compatible servers, weights, prompt cache."""
