"""Drake peer: a discrete ``MultibodyPlant`` (SAP contact solver) for the scenes of :mod:`peer_scenes`.

Two variants: ``drake`` (point contact, Drake's default compliance from its penetration
allowance) and ``drake_hydro`` (hydroelastic contact: compliant boxes of modulus
``HYDRO_MODULUS`` on a rigid ground; run on the tower, where point contact between
face-to-face boxes is one point per pair and the tower does not stand on it).

Robots: the URDF through Drake's parser (every ``<collision>`` gets the scene's friction
as ``drake:proximity_properties``; meshes are convex hulls for point contact), the
robot's geometries filtered from colliding with each other, every revolute joint
actuated (the URDF's simple transmissions, plus an actuator on each joint of a
transmission type Drake ignores) by a PD controller of the scene's ``kp``/``kd`` (SAP
treats it implicitly, with the URDF effort limit), its desired state the posture. Stepped by ``Simulator.AdvanceTo``
one time step at a time.

Contact forces come from the plant's contact results port (sampled at the last step):
point pairs' ``contact_force`` (on B) and depth; hydroelastic ``F_Ac_W`` (on A), no
single depth (NaN: only our penetration from the poses is reported).
"""

import importlib
import importlib.metadata
import logging
import os
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

from peer_harness import PeerRun, measuring

#: Hydroelastic modulus of the compliant boxes [Pa] (hard rubber; the tower's boxes).
HYDRO_MODULUS = 1e7
_PROXIMITY = ('<drake:proximity_properties><drake:mu_dynamic value="{mu}"/>'
              '<drake:mu_static value="{mu}"/></drake:proximity_properties></collision>')


class _Engine:
    def __init__(self, diagram, plant, simulator, kind, bodies, joints, notes):
        self.plant, self.sim, self.kind, self.bodies, self.joints = plant, simulator, kind, bodies, joints
        self.ctx = plant.GetMyContextFromRoot(simulator.get_context())
        self.world = plant.world_body().index()
        self.inspector = None
        self.version, self.notes = importlib.metadata.version("drake"), notes
        self._t, self._h = [0], plant.time_step()
        advance, t, h = simulator.AdvanceTo, self._t, self._h

        def step():
            t[0] += 1
            advance(t[0] * h)

        self.step = step

    def _pose(self, body):
        X = self.plant.EvalBodyPoseInWorld(self.ctx, body)
        q = X.rotation().ToQuaternion()
        return np.r_[X.translation(), q.x(), q.y(), q.z(), q.w()]

    def pose(self):
        if self.kind == "tower":
            return np.array([self._pose(b) for b in self.bodies])
        return self._pose(self.bodies[0]), {name: j.get_angle(self.ctx) for name, j in self.joints.items()}

    def contacts(self):
        cr = self.plant.get_contact_results_output_port().Eval(self.ctx)
        F, depth = [], [0.0]
        for i in range(cr.num_point_pair_contacts()):
            info = cr.point_pair_contact_info(i)
            pp = info.point_pair()
            depth.append(pp.depth)
            if self.world in (info.bodyA_index(), info.bodyB_index()):
                sign = 1.0 if info.bodyA_index() == self.world else -1.0  # force on the non-ground body
                F.append(sign * info.contact_force())
        nh = cr.num_hydroelastic_contacts()
        for i in range(nh):
            info = cr.hydroelastic_contact_info(i)
            s = info.contact_surface()
            bodies = [self._body_of(s.id_M()), self._body_of(s.id_N())]
            if self.world in bodies:
                sign = -1.0 if bodies[0] == self.world else 1.0  # F_Ac_W acts on A (M's body)
                F.append(sign * info.F_Ac_W().translational())
        d = float("nan") if nh else max(depth)
        return np.array(F).reshape(-1, 3), d, cr.num_point_pair_contacts() + nh

    def _body_of(self, geometry_id):
        if self.inspector is None:
            self.inspector = self.plant.get_geometry_query_input_port().Eval(self.ctx).inspector()
        return self.plant.GetBodyFromFrameId(self.inspector.GetFrameId(geometry_id)).index()


def _plant(scene, contact_model):
    from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
    from pydrake.systems.framework import DiagramBuilder

    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlant(
        MultibodyPlantConfig(time_step=scene.h, discrete_contact_approximation="sap",
                             contact_model=contact_model), builder)
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, -scene.gravity])
    return builder, plant, scene_graph


def _ground(plant, scene, hydro):
    from pydrake.geometry import AddContactMaterial, AddRigidHydroelasticProperties, HalfSpace, ProximityProperties
    from pydrake.math import RigidTransform
    from pydrake.multibody.plant import CoulombFriction

    props = ProximityProperties()
    AddContactMaterial(friction=CoulombFriction(scene.friction, scene.friction), properties=props)
    if hydro:
        AddRigidHydroelasticProperties(props)
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground", props)


def _finish(builder, plant, kind, bodies, joints, notes, set_state):
    from pydrake.systems.analysis import Simulator

    diagram = builder.Build()
    simulator = Simulator(diagram)
    ctx = plant.GetMyMutableContextFromRoot(simulator.get_mutable_context())
    set_state(ctx)
    simulator.Initialize()
    return _Engine(diagram, plant, simulator, kind, bodies, joints, notes)


def build_robot(scene, hydro=False):
    from pydrake.common.eigen_geometry import Quaternion
    from pydrake.geometry import CollisionFilterDeclaration
    from pydrake.math import RigidTransform
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.tree import JointActuatorIndex, PdControllerGains

    builder, plant, scene_graph = _plant(scene, "hydroelastic_with_fallback" if hydro else "point")
    with tempfile.TemporaryDirectory() as tmp:  # a string may not name meshes by path
        text = _drake_urdf(scene.urdf_text, tmp).replace("</collision>", _PROXIMITY.format(mu=scene.friction))
        text = text.replace("<robot ", '<robot xmlns:drake="http://drake.mit.edu" ', 1)
        path = os.path.join(tmp, scene.name + ".urdf")
        with open(path, "w") as f:
            f.write(text)
        (model,) = Parser(plant).AddModels(path)
    _ground(plant, scene, hydro)
    # (GetJointActuatorIndices needs a finalized plant)
    actuators = [plant.get_joint_actuator(JointActuatorIndex(i)) for i in range(plant.num_actuators())]
    have = {act.joint().name() for act in actuators}
    for name in scene.effort:  # Talos' differential wrist, torso and head transmissions,
        if name not in have:  # which Drake's parser ignores: a servo on each joint, as elsewhere
            actuators.append(plant.AddJointActuator(name + "_servo", plant.GetJointByName(name, model),
                                                    scene.effort[name]))
    targets = []
    for act in actuators:
        act.set_controller_gains(PdControllerGains(p=scene.kp, d=scene.kd))
        targets.append(scene.joints.get(act.joint().name(), 0.0))
    plant.Finalize()
    bodies = [plant.get_body(b) for b in plant.GetBodyIndices(model)]
    scene_graph.collision_filter_manager().Apply(
        CollisionFilterDeclaration().ExcludeWithin(plant.CollectRegisteredGeometries(bodies)))
    joints = {plant.get_joint(j).name(): plant.get_joint(j) for j in plant.GetJointIndices(model)
              if plant.get_joint(j).num_positions() == 1}
    base = plant.GetBodyByName(root_link(scene), model)

    def set_state(ctx):
        x, y, z, w = scene.base[3:]
        plant.SetFreeBodyPose(ctx, base, RigidTransform(Quaternion(w, x, y, z), scene.base[:3]))
        for name, j in joints.items():
            j.set_angle(ctx, scene.joints.get(name, 0.0))
        plant.get_desired_state_input_port(model).FixValue(ctx, np.r_[targets, np.zeros(len(targets))])
        plant.get_actuation_input_port(model).FixValue(ctx, np.zeros(len(targets)))

    notes = (f"{len(targets)} PD actuators kp={scene.kp:g} kd={scene.kd:g} (implicit in SAP, effort-limited; "
             f"no gravity compensation); {'hydroelastic' if hydro else 'point'} contact; no self-collision")
    return _finish(builder, plant, "robot", [base], joints, notes, set_state)


def _drake_urdf(urdf_text, tmp):
    """The URDF as Drake can take it: without ``<mimic>`` on fixed joints (Drake refuses
    it), and each collision mesh in a format Drake does not read (Talos' STL) written
    to ``tmp`` as an OBJ of the same triangles, its URDF scale (mirrors too) applied."""
    import coal

    root = ET.fromstring(urdf_text)
    for joint in root.findall("joint"):  # Talos' reduced grippers: fixed joints with a <mimic>
        for m in joint.findall("mimic") if joint.get("type") == "fixed" else ():
            joint.remove(m)
    for k, mesh in enumerate(root.iter("mesh")):
        path = mesh.get("filename")
        if os.path.splitext(path)[1].lower() in (".obj", ".vtk", ".gltf"):
            continue
        scale = np.array([float(x) for x in mesh.get("scale", "1 1 1").split()])
        bvh = coal.MeshLoader().load(path, scale)
        out = os.path.join(tmp, f"mesh{k}.obj")
        with open(out, "w") as f:
            f.writelines(f"v {x:.17g} {y:.17g} {z:.17g}\n" for x, y, z in np.asarray(bvh.vertices()))
            for i in range(bvh.num_tris):
                t = bvh.tri_indices(i)
                f.write(f"f {t[0] + 1} {t[1] + 1} {t[2] + 1}\n")
        mesh.set("filename", out)
        mesh.set("scale", "1 1 1")
    return ET.tostring(root, encoding="unicode")


def root_link(scene):
    """The URDF's root link (the one that is no joint's child): the floating base."""
    root = ET.fromstring(scene.urdf_text)
    children = {j.find("child").get("link") for j in root.findall("joint")}
    (base,) = [link.get("name") for link in root.findall("link") if link.get("name") not in children]
    return base


def build_tower(scene, hydro=False):
    from pydrake.common.eigen_geometry import Quaternion
    from pydrake.geometry import AddCompliantHydroelasticProperties, AddContactMaterial, Box, ProximityProperties
    from pydrake.math import RigidTransform
    from pydrake.multibody.plant import CoulombFriction
    from pydrake.multibody.tree import SpatialInertia

    builder, plant, _ = _plant(scene, "hydroelastic" if hydro else "point")
    _ground(plant, scene, hydro)
    bodies = []
    for b in scene.boxes:
        body = plant.AddRigidBody(b.name, SpatialInertia.SolidBoxWithMass(b.mass, *b.size))
        props = ProximityProperties()
        AddContactMaterial(friction=CoulombFriction(scene.friction, scene.friction), properties=props)
        if hydro:
            AddCompliantHydroelasticProperties(resolution_hint=float(min(b.size)), hydroelastic_modulus=HYDRO_MODULUS,
                                               properties=props)
        plant.RegisterCollisionGeometry(body, RigidTransform(), Box(*b.size), b.name, props)
        bodies.append(body)
    plant.Finalize()

    def set_state(ctx):
        for b, body in zip(scene.boxes, bodies):
            x, y, z, w = b.pose[3:]
            plant.SetFreeBodyPose(ctx, body, RigidTransform(Quaternion(w, x, y, z), b.pose[:3]))

    notes = (f"hydroelastic contact, compliant boxes E = {HYDRO_MODULUS:g} Pa on a rigid ground" if hydro
             else "point contact (one point per box pair)")
    return _finish(builder, plant, "tower", bodies, {}, notes, set_state)


def _runner(name, hydro):
    def runs(scene, **options):
        try:
            importlib.import_module("pydrake")
        except ImportError:
            return PeerRun(name, scene.name, "not installed")
        log = logging.getLogger("drake")
        level = log.level
        log.setLevel(logging.ERROR)  # the parser's warnings are handled here and in the notes:
        try:  # ignored transmissions (servos added), no deformable contact with a half space
            engine = (build_robot if scene.kind == "robot" else build_tower)(scene, hydro)
        finally:
            log.setLevel(level)
        return (yield from measuring(engine, scene, name=name, **options))

    runs.__doc__ = (f"Measure a :mod:`peer_scenes` scene in Drake ({'hydroelastic' if hydro else 'point'} "
                    "contact): a generator of :func:`peer_harness.measuring`'s kind, whose value is a PeerRun.")
    return runs


runs = _runner("drake", False)
runs_hydro = _runner("drake_hydro", True)
