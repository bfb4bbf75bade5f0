package dev.fencing.fence.http;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.protocol.TokenHeaders;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

/**
 * The HTTP fence as a Servlet 6 filter (jakarta.servlet). Either construct it with an {@link HttpFence} and register
 * it programmatically (the way to use a {@link JdbcFenceStore}), or declare it in web.xml with init parameters read by
 * {@link FencePolicy#fromSettings} ({@code locks}, {@code paths}, {@code methods}, {@code strict}, {@code permissive},
 * {@code drainTimeoutMillis}, {@code signingKeyFile}) over an {@link InMemoryFenceStore}. Paths are matched inside the web application
 * (servlet path plus path info, as decoded and normalised by the container).
 *
 * <p>An admitted request keeps its place in the fence until the filter chain returns, or, when the handler went
 * asynchronous, until the async request completes, fails or times out.
 */
public final class FenceServletFilter implements Filter {

  /** The longest body of a refused request that is read and discarded to keep the connection open. */
  static final int DISCARD_LIMIT = 64 * 1024;

  private volatile HttpFence fence;

  /** For web.xml: configured in {@link #init} from the filter's init parameters. */
  public FenceServletFilter() {
  }

  public FenceServletFilter(HttpFence fence) {
    this.fence = fence;
  }

  /** The fence, null before {@link #init} when declared without one. */
  public HttpFence fence() {
    return fence;
  }

  @Override
  public void init(FilterConfig config) throws ServletException {
    if (fence != null) {
      return;
    }
    try {
      fence = new HttpFence(FencePolicy.fromSettings(config::getInitParameter), new InMemoryFenceStore());
    } catch (IllegalArgumentException e) {
      throw new ServletException("fencing: filter '" + config.getFilterName() + "': " + e.getMessage(), e);
    }
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
      chain.doFilter(request, response);
      return;
    }
    HttpServletRequest req = (HttpServletRequest) request;
    HttpServletResponse res = (HttpServletResponse) response;
    Decision decision = fence.decide(req.getMethod(), path(req), values(req.getHeaders(TokenHeaders.TOKEN)),
        values(req.getHeaders(TokenHeaders.LOCK)), values(req.getHeaders(TokenHeaders.SIGNATURE)),
        values(req.getHeaders(TokenHeaders.GRANT)));
    if (decision.isRejected()) {
      if (!discardBody(req)) {
        res.setHeader("Connection", "close");
      }
      send(res, decision.problem());
      return;
    }
    boolean async = false;
    try {
      chain.doFilter(request, response);
      async = decision.isAdmitted() && req.isAsyncStarted() && releaseOnAsyncEnd(req, decision);
    } finally {
      if (!async) {
        decision.release();
      }
    }
  }

  private static boolean releaseOnAsyncEnd(HttpServletRequest req, Decision decision) {
    try {
      req.getAsyncContext().addListener(new AsyncListener() {
        @Override
        public void onComplete(AsyncEvent event) {
          decision.release();
        }

        @Override
        public void onTimeout(AsyncEvent event) {
          decision.release();
        }

        @Override
        public void onError(AsyncEvent event) {
          decision.release();
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
          event.getAsyncContext().addListener(this);
        }
      });
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  private static String path(HttpServletRequest req) {
    String info = req.getPathInfo();
    return info == null ? req.getServletPath() : req.getServletPath() + info;
  }

  private static List<String> values(Enumeration<String> e) {
    return e == null ? null : Collections.list(e);
  }

  /**
   * Reads and discards a refused request's body, up to {@link #DISCARD_LIMIT} bytes, before the refusal is
   * written; false if it is longer or unreadable. Why: the refusal is committed as soon as it is written, and a
   * container that then finds body bytes still to come (the JDK client writes headers and body separately) closes
   * the connection without saying so: the client pools it and its next request fails with an EOF instead of an
   * answer. A longer body is not read; the refusal says {@code Connection: close} instead.
   */
  static boolean discardBody(HttpServletRequest req) {
    long length = req.getContentLengthLong();
    if (length == 0) {
      return true;
    }
    if (length > DISCARD_LIMIT) {
      return false;
    }
    try {
      InputStream in = req.getInputStream();
      byte[] buffer = new byte[(int) Math.min(length < 0 ? DISCARD_LIMIT : length, 8192)];
      long read = 0;
      for (int n; (n = in.read(buffer)) >= 0; ) {
        read += n;
        if (read > DISCARD_LIMIT) {
          return false;
        }
      }
      return true;
    } catch (IOException | IllegalStateException e) {
      return false;
    }
  }

  private static void send(HttpServletResponse res, Problem problem) throws IOException {
    byte[] body = problem.json().getBytes(StandardCharsets.UTF_8);
    res.setStatus(problem.status());
    for (Map.Entry<String, String> h : problem.headers().entrySet()) {
      res.setHeader(h.getKey(), h.getValue());
    }
    res.setContentLength(body.length);
    res.getOutputStream().write(body);
  }
}
