package dev.fencing.fence.http;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.fencing.protocol.TokenHeaders;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The HTTP fence for the JDK's {@code com.sun.net.httpserver}: add it to each context whose handlers write
 * ({@code context.getFilters().add(new FenceHttpFilter(fence))}). Paths are matched against the full request path. A
 * refused request gets its problem response here and never reaches the handler.
 *
 * <p>The server runs handlers on its executor; give it one with enough threads (the default runs one exchange at a
 * time), since the first request of a new token waits in this filter for older ones to finish.
 */
public final class FenceHttpFilter extends Filter {

  private final HttpFence fence;

  public FenceHttpFilter(HttpFence fence) {
    this.fence = fence;
  }

  public HttpFence fence() {
    return fence;
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    Headers in = exchange.getRequestHeaders();
    Decision decision = fence.decide(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
        in.get(TokenHeaders.TOKEN), in.get(TokenHeaders.LOCK), in.get(TokenHeaders.SIGNATURE),
        in.get(TokenHeaders.GRANT));
    if (decision.isRejected()) {
      send(exchange, decision.problem());
      return;
    }
    try {
      chain.doFilter(exchange);
    } finally {
      decision.release();
    }
  }

  @Override
  public String description() {
    return "Fencing Agent HTTP fence (" + fence.policy() + ")";
  }

  private static void send(HttpExchange exchange, Problem problem) throws IOException {
    byte[] body = problem.json().getBytes(StandardCharsets.UTF_8);
    Headers out = exchange.getResponseHeaders();
    for (Map.Entry<String, String> h : problem.headers().entrySet()) {
      out.set(h.getKey(), h.getValue());
    }
    try (exchange) {
      exchange.sendResponseHeaders(problem.status(), body.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    }
  }
}
