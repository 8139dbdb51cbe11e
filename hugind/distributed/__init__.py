"""Running hugind's work on a Ray cluster (``--ray``): optional, imported only when asked for.

* ``connect``: import Ray (one clear error without it) and join or start a cluster;
* ``package``: an agent as one blob named by its digest, unpacked on workers;
* ``wire``: host-call errors across process boundaries, as data;
* ``ray_team``: ``hugind team --ray`` (the team's shared state in an actor);
* ``ray_batch``: ``hugind batch --ray`` (each item a Ray task).
"""
