"""The sandbox submissions run in: answer-free workers, confinement, framing.

Outside the sandbox: `workers` (the Worker processes, and the sandbox's public names),
`settings` (`c.Sandbox.*`, the sandbox's identity), `cgroups` (per-notebook limits, v1
or v2), `bwrap` (the bubblewrap command and the check that it runs here), `launch`
(starts one worker). Inside it, one worker: `execution` (the relay: requests in,
outputs out), `template` (the process every notebook is forked from; it never holds a
request), `notebook` (one notebook's child), `capture` (its outputs), `isolation` (its
namespaces, mounts and rlimits), `confine` (capabilities and seccomp), `framing` (the
pipes' bounded frames). Nothing mounted inside knows an answer (`bwrap.WORKER_FILES`).
"""
