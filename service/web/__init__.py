"""Server-rendered web pages (review, runs, report): Jinja2 templates and static CSS/JS."""
