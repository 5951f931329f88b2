"""The node's services: ``~/reset``, ``~/set_paused``, ``~/step`` (a mixin of the node).

Each waits at most :data:`WAIT` seconds for the physics thread and answers
``success=False`` with the reason when it did not answer, or when the request failed.
"""

from concurrent.futures import TimeoutError as FutureTimeout

from rclpy.parameter import Parameter
from std_srvs.srv import SetBool, Trigger

#: How long [s] a service waits for the physics thread.
WAIT = 2.0


class NodeServices:
    """Services of :class:`contact_lcp.ros.node.ContactLCPNode` (uses its ``_loop``)."""

    def _make_services(self):
        self.create_service(Trigger, "~/reset", self._srv_reset)
        self.create_service(SetBool, "~/set_paused", self._srv_set_paused)
        self.create_service(Trigger, "~/step", self._srv_step)

    def _srv_reset(self, request, response):
        """Back to the initial state; after a failed step, also running again."""
        fut = self._loop.reset()
        response.success, response.message = self._wait(fut, "reset")
        if response.success and fut.result():  # it was stopped by an error: now running
            result = self.set_parameters([Parameter("paused", value=False)])[0]
            if result.successful:
                response.message += f"; running again after: {fut.result()}"
            else:
                response.success = False
                response.message = f"reset, but still paused: {result.reason}"
        return response

    def _srv_step(self, request, response):
        response.success, response.message = self._wait(self._loop.step_once(), "stepped")
        if response.success and self._loop.error:
            response.success, response.message = False, f"the step failed: {self._loop.error}"
        return response

    def _srv_set_paused(self, request, response):
        result = self.set_parameters([Parameter("paused", value=bool(request.data))])[0]
        response.success = result.successful
        response.message = result.reason or ("paused" if request.data else "running")
        if result.successful:  # the parameter callback queued it: wait until it is in force
            ok, why = self._wait(self._loop.submit(lambda sim: None), "")
            if not ok:
                response.success, response.message = False, why
        return response

    def _wait(self, fut, verb):
        try:
            fut.result(WAIT)
        except FutureTimeout:
            return False, f"the physics thread did not answer within {WAIT:g} s"
        except Exception as e:
            return False, str(e)
        return True, f"{verb}; sim time {self._loop.time:.6f} s"
