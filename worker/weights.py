"""Model weights for the worker: synced from S3 to the instance's cache, checked against a manifest.

    s3://<bucket>/<prefix>/manifest.json   {"files": [{"path": "config.json", "bytes": 123, "sha256": "..."}, ...]}
    s3://<bucket>/<prefix>/<path>          each file the manifest lists

The cache (`MODEL_CACHE_DIR`, a host volume the job definition mounts) keeps one directory per
manifest digest, so jobs on the same instance reuse it: a verified copy is reused when the manifest
digest and every file's size and mtime still match what was verified; anything else is re-checked
by sha256 and re-downloaded if it differs. A file whose download does not match its checksum, or a
prefix without a manifest, raises ModelUnavailable at once: the job falls back without waiting out
a heartbeat window. A model baked into the image (Dockerfile build arg MODEL_DIR) carries the same
manifest and is checked by size (the image digest vouches for the bytes).

    python -m worker.weights manifest DIR     writes DIR/manifest.json (run before uploading DIR to S3)
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

MANIFEST = "manifest.json"
MARKER = ".crossover-verified.json"
_CHUNK = 8 * 1024 * 1024


class ModelUnavailable(Exception):
    """No usable model: missing prefix or manifest, a checksum mismatch, or a model server that died."""


@dataclass
class SyncReport:
    source: str  # "s3" (downloaded), "cache" (reused), "baked" (in the image), "external" (a server we do not start)
    files: int = 0
    bytes_total: int = 0
    bytes_downloaded: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def build_manifest(directory: str) -> dict[str, Any]:
    files = []
    for root, _, names in os.walk(directory):
        for name in sorted(names):
            full = os.path.join(root, name)
            relative = os.path.relpath(full, directory)
            if relative in (MANIFEST, MARKER):
                continue
            files.append({"path": relative, "bytes": os.path.getsize(full), "sha256": sha256_file(full)})
    return {"files": sorted(files, key=lambda f: f["path"])}


def parse_manifest(raw: bytes) -> list[dict[str, Any]]:
    """The manifest's files; refuses paths that would leave the model directory."""
    try:
        files = json.loads(raw)["files"]
        checked = [{"path": str(f["path"]), "bytes": int(f["bytes"]), "sha256": str(f["sha256"]).lower()} for f in files]
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"the model manifest is not valid: {exc.__class__.__name__}") from exc
    for entry in checked:
        parts = entry["path"].split("/")
        if entry["path"].startswith("/") or ".." in parts or not entry["path"]:
            raise ModelUnavailable(f"the model manifest names a path outside the model: {entry['path']!r}")
    if not checked:
        raise ModelUnavailable("the model manifest lists no files")
    return checked


def split_s3_uri(uri: str) -> tuple[str, str]:
    if not uri.startswith("s3://") or "/" not in uri[5:]:
        raise ModelUnavailable(f"MODEL_S3_URI must look like s3://bucket/prefix/, not {uri!r}")
    bucket, prefix = uri[5:].split("/", 1)
    return bucket, prefix if not prefix or prefix.endswith("/") else prefix + "/"


def _stat(path: str) -> list[int]:
    info = os.stat(path)
    return [info.st_size, info.st_mtime_ns]


def _verified(directory: str, digest: str, files: list[dict[str, Any]]) -> bool:
    try:
        with open(os.path.join(directory, MARKER), encoding="utf-8") as handle:
            marker = json.load(handle)
        return marker["manifest_sha256"] == digest and all(
            marker["files"].get(f["path"]) == _stat(os.path.join(directory, f["path"])) for f in files)
    except (OSError, ValueError, KeyError):
        return False


def sync_from_s3(s3: Any, uri: str, cache_root: str) -> tuple[str, SyncReport]:
    """The model directory in the cache, downloading only what the cache lacks or has wrong."""
    started = time.monotonic()
    bucket, prefix = split_s3_uri(uri)
    try:
        raw = s3.get_object(Bucket=bucket, Key=prefix + MANIFEST)["Body"].read()
    except Exception as exc:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", exc.__class__.__name__)
        raise ModelUnavailable(f"no model manifest at s3://{bucket}/{prefix}{MANIFEST} ({code})") from exc
    files = parse_manifest(raw)
    digest = hashlib.sha256(raw).hexdigest()
    directory = os.path.join(cache_root, digest[:16])
    os.makedirs(directory, exist_ok=True)
    report = SyncReport(source="cache", files=len(files), bytes_total=sum(f["bytes"] for f in files))
    # Two jobs on one multi-GPU instance share the cache: one downloads, the other waits and reuses.
    with open(os.path.join(cache_root, f".lock-{digest[:16]}"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _verified(directory, digest, files):
            for entry in files:
                path = os.path.join(directory, entry["path"])
                if os.path.exists(path) and os.path.getsize(path) == entry["bytes"] and sha256_file(path) == entry["sha256"]:
                    continue
                os.makedirs(os.path.dirname(path), exist_ok=True)
                partial = path + ".partial"
                try:
                    s3.download_file(bucket, prefix + entry["path"], partial)
                except Exception as exc:
                    code = getattr(exc, "response", {}).get("Error", {}).get("Code", exc.__class__.__name__)
                    raise ModelUnavailable(f"model file {entry['path']} could not be downloaded ({code})") from exc
                actual = sha256_file(partial)
                if actual != entry["sha256"] or os.path.getsize(partial) != entry["bytes"]:
                    os.remove(partial)
                    raise ModelUnavailable(f"model file {entry['path']} does not match its checksum in the manifest")
                os.replace(partial, path)
                report.source = "s3"
                report.bytes_downloaded += entry["bytes"]
            with open(os.path.join(directory, MARKER), "w", encoding="utf-8") as handle:
                json.dump({"manifest_sha256": digest, "files": {f["path"]: _stat(os.path.join(directory, f["path"])) for f in files}}, handle)
    report.seconds = round(time.monotonic() - started, 3)
    return directory, report


def check_baked(directory: str) -> SyncReport:
    """A model baked into the image: every file the manifest lists, at its size."""
    started = time.monotonic()
    try:
        with open(os.path.join(directory, MANIFEST), "rb") as handle:
            files = parse_manifest(handle.read())
    except OSError as exc:
        raise ModelUnavailable(f"no model manifest in the image at {directory}") from exc
    for entry in files:
        path = os.path.join(directory, entry["path"])
        if not os.path.isfile(path) or os.path.getsize(path) != entry["bytes"]:
            raise ModelUnavailable(f"baked model file {entry['path']} is missing or has the wrong size")
    return SyncReport(source="baked", files=len(files), bytes_total=sum(f["bytes"] for f in files),
                      seconds=round(time.monotonic() - started, 3))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "manifest":
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    manifest = build_manifest(argv[1])
    with open(os.path.join(argv[1], MANIFEST), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)
    print(f"{len(manifest['files'])} files, {sum(f['bytes'] for f in manifest['files'])} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
