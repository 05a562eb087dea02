"""topicstreams: follow news topics on Google, Bing, Yahoo and Brave News with Scrapy."""

ENGINES = ("google", "bing", "yahoo", "brave")
"""The engines this project crawls, in the order commands list them."""
