"""Run the assistant's command line from a checkout: ``python cli.py ask "..."``."""

from assistant.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
