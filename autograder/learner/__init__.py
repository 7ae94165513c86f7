"""What a learner's notebook calls: `Exercise(name)` and whose numbers they are.

`check`: `.given()`, `.check()`, `.check_function()`, `.check_class()`, `.practise()`;
`identity`: the learner's identity as the kernel can tell it.
"""
