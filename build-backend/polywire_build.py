"""The build backend of polywire's source distribution: maturin, once Rust is known to be
there.

pip builds from the sdist only where no wheel fits (a platform or Python that is not
published). Building needs a Rust toolchain; without one, maturin would download it (over
a gigabyte) and compile for ten minutes or more, and pip shows nothing of it but "Building
wheel ... still running". This backend checks first and fails at once, saying what to
install, unless ``POLYWIRE_BUILD_INSTALL_RUST=1`` asks for maturin's download. It also says
on stderr what it is doing (``pip install -v`` shows it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import Any, Mapping

import maturin
from maturin import (  # noqa: F401 - the hooks passed through as they are
    build_sdist,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

MIN_RUST = (1, 85)
ALLOW_DOWNLOAD = "POLYWIRE_BUILD_INSTALL_RUST"


def _say(text: str) -> None:
    print(f"polywire: {text}", file=sys.stderr, flush=True)


def rust_problem(env: Mapping[str, str] | None = None) -> str | None:
    """Why Rust cannot build polywire here (None: it can)."""
    env = os.environ if env is None else env
    cargo = shutil.which("cargo", path=env.get("PATH"))
    if cargo is None:
        return "no Rust toolchain (cargo) was found on PATH"
    try:
        out = subprocess.run([cargo, "--version"], capture_output=True, text=True, timeout=60, env=dict(env)).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"{cargo} --version failed: {e}"
    m = re.search(r"cargo (\d+)\.(\d+)", out)
    if not m:
        return f"{cargo} --version printed {out.strip()!r}"
    if (int(m.group(1)), int(m.group(2))) < MIN_RUST:
        return f"Rust {m.group(1)}.{m.group(2)} is too old (polywire needs {MIN_RUST[0]}.{MIN_RUST[1]} or newer)"
    return None


def _check() -> None:
    if os.environ.get(ALLOW_DOWNLOAD) == "1":
        return
    # rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
    rustup_bin = os.path.join(os.path.expanduser("~"), ".cargo", "bin")
    if shutil.which("cargo") is None and os.path.exists(os.path.join(rustup_bin, "cargo")):
        _say(f"using the Rust toolchain in {rustup_bin} (not on PATH)")
        os.environ["PATH"] = rustup_bin + os.pathsep + os.environ.get("PATH", "")
    problem = rust_problem()
    if problem is None:
        return
    raise SystemExit(
        "\n".join(
            [
                f"polywire: no prebuilt wheel fits this platform ({sys.platform}, Python {sys.version.split()[0]}),",
                f"so pip is building it from source, and {problem}.",
                "",
                "Install Rust (https://rustup.rs: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh),",
                "then run pip again; the build takes a few minutes. Or set",
                f"{ALLOW_DOWNLOAD}=1 to let maturin download a Rust toolchain (over a gigabyte) for this build.",
            ]
        )
    )


def _without_rust_download(requirements: list[str]) -> list[str]:
    # maturin asks for its Rust installer when cargo is missing; _check refuses first.
    if os.environ.get(ALLOW_DOWNLOAD) == "1":
        return requirements
    return [r for r in requirements if not r.startswith("puccinialin")]


def get_requires_for_build_wheel(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    _check()
    return _without_rust_download(maturin.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_editable(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    _check()
    return _without_rust_download(maturin.get_requires_for_build_editable(config_settings))


def build_wheel(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    _check()
    _say("compiling the Rust extension with cargo (a few minutes; pip install -v shows cargo's progress)")
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    _say(f"built {name}")
    return name


def build_editable(wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    _check()
    _say("compiling the Rust extension with cargo (a few minutes)")
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
