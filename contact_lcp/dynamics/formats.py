"""Robot description formats besides plain URDF: xacro (expanded to URDF) and MuJoCo's
MJCF (read by Pinocchio's MJCF parser, with MuJoCo's collision geometry).

A robot's ``urdf`` path decides: ``*.xacro`` is expanded with the spec's ``xacro_args``
(the pure-Python ``xacro`` of PyPI, as ``xacro file.xacro name:=value``); an XML file
whose root element is ``<mujoco>`` is MJCF. Both end as the same Pinocchio model and
geometry a URDF gives, so every check and everything after loading is shared.
"""

import xml.etree.ElementTree as ET
from dataclasses import replace

import pinocchio as pin

from contact_lcp.exceptions import SceneError


def expand_xacro(path, args, who):
    """The URDF text of xacro file ``path`` with ``args`` (``{name: value}``); a
    SceneError naming ``who``, the file and xacro's reason when it does not expand."""
    import xacro

    try:
        doc = xacro.process_file(path, mappings={str(k): str(v) for k, v in dict(args).items()})
    except Exception as e:  # xacro raises XacroException, XML and substitution errors
        raise SceneError(f"{who}: xacro file {path!r} does not expand: "
                         f"{type(e).__name__}: {e}") from None
    return doc.toxml()


def is_xacro(text):
    """True when XML ``text`` declares the xacro namespace (xacro text, not yet URDF)."""
    return "http://www.ros.org/wiki/xacro" in text or "http://wiki.ros.org/xacro" in text


def expand_xacro_text(text, who):
    """The URDF of xacro ``text`` (a robot_description given as xacro; its arguments take
    their defaults and includes resolve from the working directory)."""
    import xacro

    try:
        doc = xacro.parse(text)
        xacro.process_doc(doc)
    except Exception as e:
        raise SceneError(f"{who}: the xacro text does not expand: {type(e).__name__}: {e}") from None
    return doc.toxml()


def is_mjcf(text):
    """True when XML ``text``'s root element is ``<mujoco>``."""
    if "<mujoco" not in text:
        return False
    try:
        return ET.fromstring(text).tag == "mujoco"
    except ET.ParseError:
        return False


def build_mjcf(spec, source):
    """``(model, collision geometry, spec)`` of the MJCF robot ``spec`` (its ``urdf`` a
    file path), with a free-flyer root joint ``root_joint`` when ``spec.floating_base``
    and the model has none of its own (a ``<freejoint>``);
    the spec returned starts from MuJoCo's ``qpos0`` unless it names a reference
    configuration.

    MJCF text (``spec.urdf_string``) is read through a temporary file, so its mesh paths
    must be absolute. Raises SceneError (naming ``source``) for what the MJCF path does
    not support (locked joints) and for what Pinocchio cannot read.
    """
    if spec.urdf_string is not None:  # MJCF text (a robot_description): read from a file
        import tempfile

        with tempfile.TemporaryDirectory(prefix="contact_lcp_mjcf_") as tmp:
            path = f"{tmp}/robot.xml"
            with open(path, "w", encoding="utf-8") as f:
                f.write(spec.urdf_string)
            model, geom, read = build_mjcf(replace(spec, urdf=path, urdf_string=None), source)
        return model, geom, replace(read, urdf=spec.urdf, urdf_string=spec.urdf_string)
    if spec.locked_joints:
        raise SceneError(f"{source}: locked_joints are for URDF robots; in MJCF, remove the "
                         f"joints {list(spec.locked_joints)} from the file")
    try:
        model = pin.buildModelFromMJCF(spec.urdf)
        own_free = model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"
        if spec.floating_base and not own_free:
            built = pin.buildModelFromMJCF(spec.urdf, pin.JointModelFreeFlyer(), "root_joint")
            model = built[0] if isinstance(built, tuple) else built
        elif own_free and not spec.floating_base:
            raise SceneError(f"{source}: the MJCF gives its root a <freejoint>; set the "
                             "robot's floating_base: true")
        geom = pin.buildGeomFromMJCF(model, spec.urdf, pin.COLLISION)
    except SceneError:
        raise
    except Exception as e:
        raise SceneError(f"{source}: Pinocchio cannot read it as MJCF: {e}") from e
    if geom.ngeoms == 0:
        raise SceneError(f"{source}: the MJCF has no collision geometry (<geom>)")
    if spec.reference_configuration is None and "qpos0" in [
            entry.key() for entry in model.referenceConfigurations]:
        # MuJoCo starts from qpos0 (a free body where its <body pos> puts it)
        spec = replace(spec, reference_configuration="qpos0")
    return model, geom, spec
