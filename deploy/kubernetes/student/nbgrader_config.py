"""nbgrader settings of a student's pod (copied to /etc/jupyter/ by the student image).

The course id comes from the pod's COURSE_ID (values.yaml, singleuser.extraEnv). The
exchange path is where the student profile mounts the learner's own views of it: the
course's outbound/ read-only, and inbound/ and feedback/ from by-user/<login>/.
"""

import os

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "backward-course")
c.Exchange.root = "/srv/nbgrader/exchange"
