"""One spider per engine (google, bing, yahoo, brave): the loop of :mod:`topicstreams.crawl.spider` bound to it."""
