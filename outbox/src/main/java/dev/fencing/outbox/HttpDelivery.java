package dev.fencing.outbox;

import dev.fencing.protocol.HttpHeaderNames;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends an HTTP event: the row's method, URL, headers and body, plus the row's {@code Fencing-Token},
 * {@code Fencing-Lock}, {@code Fencing-Grant} and {@code Idempotency-Key: <event id>}. A 2xx is delivered; a 409 with
 * {@code Fencing-Rejected} is a fence's final no; anything else fails and is retried.
 */
final class HttpDelivery {
  /** The relay's own headers: a row's header of one of these names is left out, the row's values win. */
  private static final Set<String> OURS = Set.of(lower(HttpHeaderNames.TOKEN), lower(HttpHeaderNames.LOCK),
      lower(HttpHeaderNames.GRANT), lower(HttpHeaderNames.SIGNATURE), lower(HttpHeaderNames.IDEMPOTENCY_KEY));

  private final HttpClient client;
  private final ExecutorService executor;
  private final Duration timeout;

  HttpDelivery(Duration timeout, OutboxRelay.Threads threads) {
    this.timeout = timeout;
    AtomicInteger n = new AtomicInteger();
    // The client's own work (a response's completion, an attempt it starts again) runs on the relay's threads too.
    this.executor = Executors.newCachedThreadPool(r -> threads.thread(r, "fencing-outbox-http-" + n.incrementAndGet()));
    this.client = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER)
        .executor(executor).build();
  }

  void close() {
    executor.shutdown();
  }

  DeliveryResult deliver(OutboxEvent e) throws InterruptedException {
    HttpRequest request;
    try {
      request = request(e);
    } catch (IllegalArgumentException bad) {
      return DeliveryResult.invalid("cannot build the request: " + bad.getMessage());
    }
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (java.io.IOException io) {
      return DeliveryResult.failed(describe(io));
    }
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return DeliveryResult.DELIVERED;
    }
    Optional<String> rejected = response.headers().firstValue(HttpHeaderNames.REJECTED);
    if (status == 409 && rejected.isPresent()) {
      return DeliveryResult.rejected("HTTP 409 " + HttpHeaderNames.REJECTED + ": " + rejected.get());
    }
    return DeliveryResult.failed("HTTP " + status + bodyExcerpt(response.body()));
  }

  private HttpRequest request(OutboxEvent e) {
    URI uri = URI.create(e.target());
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
      throw new IllegalArgumentException("target '" + e.target() + "' is not an absolute http(s) URL");
    }
    String method = e.method() == null || e.method().isBlank() ? "POST" : e.method().trim().toUpperCase(Locale.ROOT);
    HttpRequest.BodyPublisher body = e.payload() == null ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofString(e.payload(), StandardCharsets.UTF_8);
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(timeout).method(method, body);
    for (String[] header : Headers.parse(e.headers())) {
      if (!OURS.contains(lower(header[0]))) {
        b.header(header[0], header[1]);
      }
    }
    if (e.token() != null) {
      b.header(HttpHeaderNames.TOKEN, Long.toString(e.token()));
    }
    if (e.lock() != null) {
      b.header(HttpHeaderNames.LOCK, e.lock());
    }
    if (e.grant() != null && !e.grant().isEmpty()) {
      b.header(HttpHeaderNames.GRANT, e.grant());
    }
    b.header(HttpHeaderNames.IDEMPOTENCY_KEY, e.eventId());
    return b.build();
  }

  private static String bodyExcerpt(String body) {
    if (body == null || body.isBlank()) {
      return "";
    }
    String oneLine = body.strip().replaceAll("\\s+", " ");
    return ": " + (oneLine.length() > 200 ? oneLine.substring(0, 200) + "..." : oneLine);
  }

  static String describe(Throwable t) {
    String m = t.getMessage();
    return t.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + m);
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
