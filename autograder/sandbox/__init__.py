"""The sandbox submissions run in: answer-free workers, confinement, framing.

`workers`: the sandbox's settings and the worker processes (bubblewrap, cgroups);
`launch`: starts one worker; `execution`: runs a notebook in a forked, confined child;
`confine`: capabilities and seccomp; `framing`: the pipes' length-prefixed frames.
Nothing here knows an answer: `execution`, `framing` and `confine` are mounted inside the
sandbox as they are.
"""
