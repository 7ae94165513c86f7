"""What the course config (nbgrader_config.py) plugs into nbgrader's own commands.

`export`: `nbgrader export` of released assignments only; `lms`: LMS file names for
`nbgrader zip_collect`; `lateness`: how late a hand-in was, decided here for the service,
the report and the feedback page (`NoteLateness`); `manual`: honest scores of written
answers on feedback pages; `problem`: each learner's structure of an exercise that varies
(the feedback page's "Your problem" line, formgrader's "Structure" line, the report's);
`grades`: nbgrader's GetGrades in two queries a page; `feedback_exporter`: nbconvert's HTML
exporter with its templates compiled once a process (`templates/`) and its BeautifulSoup
pass made without the tree (`accessible_html`).
"""
