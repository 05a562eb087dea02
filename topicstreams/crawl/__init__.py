"""The crawl's own parts: the spider loop, its topic supplies and schedule, the engines' live state, the request
meta keys and signals, and the process's runtime (:mod:`topicstreams.crawl.runtime`)."""
