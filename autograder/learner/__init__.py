"""What a learner's notebook calls: `Exercise(name)` and whose numbers they are.

`check`: `.given()`, `.check()`, `.check_function()`, `.check_class()`, `.practise()`;
`identity`: the learner's identity as the kernel can tell it; `kernel`: what every
`Exercise` does in the kernel (also the class's, `autograder_client`); `wire`: a learner's
value as the class check service receives it. `kernel` and `wire` are answer-free: a
class's students' environment ships them.
"""
