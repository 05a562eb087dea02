"""The web app (``scrapy serve``): routes, query parameters and rendering; what it reads comes from storage's read
models and the reports."""
