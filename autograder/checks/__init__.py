"""The class check service: learners' checks judged where the answer key is.

`judging`: the protocol's answers, computed by `feedback.judge` as the grader computes
them; `service`: the JupyterHub service (tornado, hub token auth, forked judges) that
serves them; `tokens`: whose token is whose, as the hub says, remembered briefly; `hub`:
the hook that adds it to the class hub's config; `ports`: the loopback port it runs on;
`learner_package`: the answer-free `autograder` package students import, whose
`Exercise` asks this service.
"""
