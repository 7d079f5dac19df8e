"""A small web site on localhost for the crawl example: N pages, each linking to the next
and to a few others chosen by a fixed rule, so every page is reachable from page 0 and most
are linked many times (the duplicates the Bloom-filter dedup must catch)."""

import http.server
import sys


def links(i, n):
    out = {(i + 1) % n}
    for k in (7, 31, 97):
        out.add((i * k + 3) % n)
    return sorted(out)


class Handler(http.server.BaseHTTPRequestHandler):
    pages = 300

    def do_GET(self):
        try:
            i = int(self.path.strip("/").removeprefix("page/"))
        except ValueError:
            i = -1
        if not 0 <= i < self.pages:
            self.send_error(404)
            return
        body = "<html><body><h1>page %d</h1>%s</body></html>" % (
            i,
            "".join('<a href="/page/%d">p%d</a> ' % (j, j) for j in links(i, self.pages)),
        )
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port, Handler.pages = int(sys.argv[1]), int(sys.argv[2])
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
