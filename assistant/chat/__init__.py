"""The interactive chat: the loop and its rendering, input and output injected."""
