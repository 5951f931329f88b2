"""package:// URIs rviz2 can open without the ament index (contact_lcp/ros/package_uris.py).

Issue 14: Talos' meshes come from the example-robot-data wheel, which the ament index
does not list, so rviz2 could not resolve ``package://example-robot-data/...``.
"""

import pytest

from contact_lcp.dynamics.robot_data import robot_data_installed
from contact_lcp.ros.package_uris import resolve_package_uris

URDF = ('<robot name="r"><link name="a"><visual><geometry>'
        '<mesh filename="package://{pkg}/robots/leg.stl"/></geometry></visual></link></robot>')


def test_unknown_packages_found_in_a_package_dir_become_file_uris(tmp_path):
    (tmp_path / "my_robot" / "robots").mkdir(parents=True)
    out = resolve_package_uris(URDF.format(pkg="my_robot"), [tmp_path], known=lambda p: False)
    assert f'filename="file://{tmp_path}/my_robot/robots/leg.stl"' in out


def test_known_or_unfound_packages_stay_as_they_are(tmp_path):
    (tmp_path / "my_robot").mkdir()
    urdf = URDF.format(pkg="my_robot")
    assert resolve_package_uris(urdf, [tmp_path], known=lambda p: True) == urdf
    other = URDF.format(pkg="nowhere")
    assert resolve_package_uris(other, [tmp_path], known=lambda p: False) == other


def test_example_robot_data_from_pip_is_found_without_a_package_dir():
    if not robot_data_installed():
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    from contact_lcp.dynamics.robot_data import robot_data_share

    out = resolve_package_uris(URDF.format(pkg="example-robot-data"), known=lambda p: False)
    assert f"file://{robot_data_share()}/example-robot-data/robots/leg.stl" in out


