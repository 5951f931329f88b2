"""What a pip install lays out for ROS tools: the node where launch_ros looks for a
package's executables (<prefix>/lib/contact_lcp/), the ament index entry that finds the
prefix, and the interface definitions the install step builds."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "resource" / "lib" / "contact_lcp_node"


@pytest.mark.slow
def test_the_wheel_carries_the_launcher_the_index_entry_and_the_interfaces(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)], check=True, cwd=tmp_path,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (wheel,) = tmp_path.glob("contact_lcp-*.whl")
    with zipfile.ZipFile(wheel) as z:
        info = {i.filename: i for i in z.infolist()}
    data = "contact_lcp-0.1.0.data/data/"
    launcher = info[data + "lib/contact_lcp/contact_lcp_node"]
    assert launcher.external_attr >> 16 & 0o111, "the launcher must be executable"
    assert data + "share/ament_index/resource_index/packages/contact_lcp" in info
    for package in ("tf2_msgs", "control_msgs", "simulation_interfaces", "contact_lcp_msgs"):
        assert f"contact_lcp/ros/idl/{package}/CMakeLists.txt" in info
        assert f"contact_lcp/ros/idl/{package}/package.xml" in info
    assert "contact_lcp/ros/idl/control_msgs/action/FollowJointTrajectory.action" in info
    assert "contact_lcp/ros/idl/wheel_fixups.cmake" in info


def test_the_launcher_runs_the_node_with_its_prefix_python(tmp_path):
    """Laid out as pip installs it into a venv: <prefix>/lib/contact_lcp/ beside
    <prefix>/bin/python3; the launcher runs the node's CLI with that Python."""
    lib = tmp_path / "lib" / "contact_lcp"
    lib.mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    python = tmp_path / "bin" / "python3"  # (this interpreter, as the venv's would be)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    target = lib / "contact_lcp_node"
    target.write_bytes(LAUNCHER.read_bytes())
    target.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH="/usr/bin:/bin")  # no venv on PATH
    out = subprocess.run([str(target), "--help"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "contact_lcp_node" in out.stdout and "--duration" in out.stdout
