package dev.fencing.faults;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * etcd's revision through its JSON gateway ({@code /v3/kv/...}, on by default in etcd 3.4): read it, and move it
 * forward, the runbook's remedy after coordinator data loss ("write to etcd until its revision is above the highest
 * token ever issued"). Every put is one revision.
 */
final class EtcdGateway {
  private static final Pattern LEASE_ID = Pattern.compile("\"ID\":\"(\\d+)\"");
  private static final Pattern REVISION = Pattern.compile("\"revision\":\"(\\d+)\"");
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();
  private static final int IN_FLIGHT = 8;
  /**
   * The harness's own keys: outside every lock's prefix (a jetcd {@code Lock} named {@code faults} is the lowest key
   * under {@code faults/}: a bump key there, leaseless, would hold that lock for ever).
   */
  private static final String KEY_PREFIX = "fencing-faults-harness/";
  /** How long a request is retried while etcd does not answer (a node just restarted, a loaded machine). */
  private static final long RETRY_NANOS = Duration.ofSeconds(30).toNanos();

  private EtcdGateway() {
  }

  /** The cluster's current revision. */
  static long revision(String clientUrl) {
    return revisionOf(post(clientUrl + "/v3/kv/range", "{\"key\":\"" + b64(KEY_PREFIX + "revision") + "\"}"));
  }

  /** Puts until the revision is above {@code target}; returns the revision reached. */
  static long bumpAbove(String clientUrl, long target) {
    String body = "{\"key\":\"" + b64(KEY_PREFIX + "bump") + "\",\"value\":\"" + b64("x") + "\"}";
    long revision = revision(clientUrl);
    while (revision <= target) {
      long missing = target - revision + 1;
      List<CompletableFuture<HttpResponse<String>>> batch = new ArrayList<>();
      for (long i = 0; i < Math.min(missing, IN_FLIGHT); i++) {
        batch.add(CLIENT.sendAsync(request(clientUrl + "/v3/kv/put", body), HttpResponse.BodyHandlers.ofString()));
      }
      boolean failed = false;
      for (CompletableFuture<HttpResponse<String>> f : batch) {
        try {
          revision = Math.max(revision, revisionOf(f.join().body()));
        } catch (RuntimeException e) {
          failed = true; // e.g. a connect timeout: the puts that did land are counted by the revision read below
        }
      }
      if (failed) {
        revision = Math.max(revision, revision(clientUrl));
      }
    }
    return revision;
  }

  /** Revokes every lease (and so deletes every key attached to one, lock keys included); returns how many. */
  static int revokeAllLeases(String clientUrl) {
    Matcher ids = LEASE_ID.matcher(post(clientUrl + "/v3/lease/leases", "{}"));
    int n = 0;
    while (ids.find()) {
      // A lease that expired meanwhile answers 404-like errors: it is gone either way.
      try {
        post(clientUrl + "/v3/lease/revoke", "{\"ID\":\"" + ids.group(1) + "\"}");
        n++;
      } catch (IllegalStateException gone) {
        // already expired
      }
    }
    return n;
  }

  /** One request; I/O failures (etcd not answering yet) are retried for 30 s, an error answer is not. */
  private static String post(String url, String body) {
    long deadline = System.nanoTime() + RETRY_NANOS;
    while (true) {
      try {
        HttpResponse<String> r = CLIENT.send(request(url, body), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          throw new IllegalStateException("POST " + url + " returned " + r.statusCode() + ": " + r.body());
        }
        return r.body();
      } catch (IOException e) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException("POST " + url + " failed for 30 s: " + e, e);
        }
        FaultRun.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }

  private static HttpRequest request(String url, String body) {
    return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }

  private static long revisionOf(String json) {
    Matcher m = REVISION.matcher(json);
    if (!m.find()) {
      throw new IllegalStateException("no revision in etcd's answer: " + json);
    }
    return Long.parseLong(m.group(1));
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
