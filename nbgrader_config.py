"""nbgrader configuration: the repository root is the course directory.

`solutions/` is the nbgrader source (the instructor's version, edited by hand).
`exercises/` is the learners' copy published in git (written only by `make exercises`).
nbgrader's own release folder is `release/` (written by `make assign` and by formgrader's
Generate button, never committed), so nothing nbgrader does rewrites `exercises/`.
The instructor's runtime data (release/, submitted/, autograded/, feedback/, gradebook.db)
is ignored by git.

Site settings (course id, exchange root, gradebook URL, LMS file names) belong to one
installation, not to the repository: put them in `site_config.py` next to this file
(ignored by git), or in the file named by the environment variable
NBGRADER_SITE_CONFIG. It is an ordinary nbgrader config file (`c = get_config()`, then
`c.CourseDirectory.course_id = ...`) loaded after this one, so it overrides it.
"""

import importlib.util
import os

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "backward-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(c.CourseDirectory.root, "gradebook.db")

# What an unanswered cell holds in the release: a clear instruction that fails when run.
c.ClearSolutions.code_stub = {
    "python": ("# YOUR ANSWER HERE: replace these two lines\nraise NotImplementedError()")
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Feedback must not show the hidden tests, nor a score for a written answer that is not
# graded yet or changed since it was graded (autograder/nbgrader_plugins/manual.py); it
# states the learner's problem where the exercise varies per learner (problem.py).
c.GenerateFeedback.preprocessors = [
    "autograder.nbgrader_plugins.grades.GetGradesAtOnce",  # nbgrader's GetGrades, 2 queries
    "autograder.nbgrader_plugins.manual.ManualGrades",
    "autograder.nbgrader_plugins.problem.NoteProblem",  # the learner's own structure, if it varies
    "autograder.nbgrader_plugins.lateness.NoteLateness",  # how late, when it was (any penalty)
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.ManualGrades.reviewed_dir = os.path.join(c.CourseDirectory.root, ".autograder", "reviewed")
_package = {  # where the two packages are, without importing them
    name: importlib.util.find_spec(name).submodule_search_locations[0]
    for name in ("autograder", "nbgrader")
}
# The same HTML exporter, its templates compiled once a process, not once a learner.
c.GenerateFeedback.exporter_class = "autograder.nbgrader_plugins.feedback_exporter.FeedbackExporter"
c.HTMLExporter.extra_template_basedirs = [
    os.path.join(_package["autograder"], "nbgrader_plugins", "templates"),
    os.path.join(_package["nbgrader"], "server_extensions", "formgrader", "templates"),
]

# Formgrader's view of a submission names the student's structure where the exercise varies.
c.HTMLExporter.preprocessors = ["autograder.nbgrader_plugins.problem.ShowStructure"]

# `nbgrader export`: only assignments released or handed in (autograder/nbgrader_plugins/export.py).
c.ExportApp.plugin_class = "autograder.nbgrader_plugins.export.ReleasedExport"

# Learners run notebooks on the CPU; a cell that runs longer than this is a bug.
c.ExecutePreprocessor.timeout = 120

# `autograder grade` runs each submitted notebook in a sandbox (bubblewrap, namespaces,
# cgroups, seccomp; see the README's threat model). These are the defaults; raise them
# for heavier assignments.
c.Sandbox.cpu_seconds = 120  # CPU time of the notebook's processes together (its cgroup)
c.Sandbox.wall_seconds = 300  # whole notebook, not per cell: stops one that only waits
c.Sandbox.cpus = 1  # CPU share of all the notebook's processes together
c.Sandbox.memory_mb = 2048  # all its processes together, in-memory files included
c.Sandbox.max_processes = 64  # processes and threads, all together
c.Sandbox.max_output_bytes = 4_000_000  # recorded output per notebook
c.Sandbox.max_file_mb = 64  # largest file a notebook may write (in its private scratch)
c.Sandbox.scratch_mb = 256  # size of each private writable filesystem (/tmp, /scratch)
# Graded as root, the sandbox runs as this unprivileged user (a dedicated account is best).
c.Sandbox.user = "nobody"
# Per-notebook cgroups are made under the grader's own cgroup; an ordinary grading user
# needs a delegated subtree, e.g. c.Sandbox.cgroup_parent = "/autograder-grader".
# Grading refuses where the limits cannot be enforced, unless this is set to False.
c.Sandbox.require_cgroups = True

# What the grader itself reads and records per submission (refused beyond, with why).
c.Budgets.max_notebook_mb = 20
c.Budgets.max_cells = 1000
c.Budgets.max_source_chars = 2_000_000
c.Budgets.max_parse_attempts = 20_000
c.Budgets.max_outputs = 2000
c.Budgets.max_submission_files = 200
c.Budgets.max_submission_mb = 100

# Submissions downloaded from an LMS (`nbgrader zip_collect`): file names as Canvas,
# Blackboard and Moodle write them, matched on the file name alone; Canvas's LATE flag
# and Blackboard's attempt time become the submission's timestamp
# (see autograder/nbgrader_plugins/lms.py).
c.ZipCollectApp.collector_plugin = "autograder.nbgrader_plugins.lms.LmsFileNames"

# Last: this installation's own settings (untracked), which override everything above.
_site = os.environ.get("NBGRADER_SITE_CONFIG", "")
if _site and not os.path.isfile(_site):
    raise FileNotFoundError(f"NBGRADER_SITE_CONFIG names {_site!r}, which is not a file")
_site = _site or os.path.join(c.CourseDirectory.root, "site_config.py")
if os.path.isfile(_site):
    load_subconfig(os.path.abspath(_site))
