package dev.fencing.agent.it.apps;

import io.netty.handler.codec.http.HttpMethod;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import dev.fencing.it.reactornetty.ReactorNettySection;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.LoopResources;

/**
 * An ordinary Reactor Netty application (no fencing code) driven over stdin: {@code <mode> <method> <url>}, where mode
 * is {@code BLOCK} (the response Mono, {@code block()} on this thread), {@code SUBSCRIBE} (subscribed with callbacks,
 * the outcome taken from whichever thread signals it), {@code SECTION} (as BLOCK, inside {@link ReactorNettySection#send},
 * which the test declares as a section of its own lock), {@code WEBCLIENT} (Spring WebClient on Reactor Netty, see
 * {@link WebClientDriver}) or {@code INTERLEAVED} ({@code INTERLEAVED <method> <url> <then-url>}, see
 * {@link #interleaved}). Its client follows redirects and adds {@code X-App}. Prints {@code STATUS <code>} or
 * {@code ERR <exception> <- <cause>...: <message of the innermost>}. Compiled against the oldest supported Reactor
 * Netty and run against each: only API they all share.
 */
public final class ReactorNettyApp {
  private ReactorNettyApp() {}

  static final HttpClient CLIENT = HttpClient.create().followRedirect(true).headers(h -> h.set("X-App", "1"))
      .responseTimeout(Duration.ofSeconds(10));

  public static void main(String[] args) throws Exception {
    System.out.println("Reactor Netty " + HttpClient.class.getPackage().getImplementationVersion() + " from "
        + HttpClient.class.getProtectionDomain().getCodeSource().getLocation());
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      String outcome;
      try {
        outcome = switch (p[0]) {
          case "BLOCK" -> "STATUS " + request(p[1], p[2]).block(Duration.ofSeconds(20));
          case "SUBSCRIBE" -> subscribe(p[1], p[2]);
          case "SECTION" -> ReactorNettySection.send(p[1], p[2]);
          case "WEBCLIENT" -> "STATUS " + WebClientDriver.exchange(p[1], p[2]);
          case "INTERLEAVED" -> interleaved(p[1], p[2], p[3]);
          default -> "ERR unknown mode " + p[0];
        };
      } catch (Throwable e) {
        outcome = describe(e);
      }
      System.out.println(outcome);
      System.out.flush();
    }
  }

  /** The status of one request, assembled (not yet sent) on the calling thread. */
  public static Mono<Integer> request(String method, String url) {
    HttpClient.RequestSender sender = CLIENT.request(HttpMethod.valueOf(method)).uri(url);
    HttpClient.ResponseReceiver<?> receiver = method.equals("GET") ? sender
        : sender.send(ByteBufFlux.fromString(Mono.just("x")));
    return receiver.responseSingle((response, body) -> body.asString().defaultIfEmpty("")
        .map(ignored -> response.status().code()));
  }

  /** One event loop for every connection: what it reads and what it sends meanwhile share its thread. */
  static final HttpClient ONE_LOOP = HttpClient.create().runOn(LoopResources.create("one-loop", 1, true))
      .responseTimeout(Duration.ofSeconds(15));

  /**
   * {@code method} to {@code url} and a POST to {@code then}, both at once from one event loop: the loop decides and
   * sends the POST while the first waits for its answer. Both statuses, in that order.
   */
  private static String interleaved(String method, String url, String then) {
    Mono<Integer> first = status(ONE_LOOP, method, url);
    Mono<Integer> second = status(ONE_LOOP, "POST", then);
    return Mono.zip(first, second).map(t -> "STATUS " + t.getT1() + " STATUS " + t.getT2())
        .block(Duration.ofSeconds(20));
  }

  private static Mono<Integer> status(HttpClient client, String method, String url) {
    return client.request(HttpMethod.valueOf(method)).uri(url).send(ByteBufFlux.fromString(Mono.just("x")))
        .responseSingle((response, body) -> body.asString().defaultIfEmpty("")
            .map(ignored -> response.status().code()));
  }

  private static String subscribe(String method, String url) throws Exception {
    CompletableFuture<String> outcome = new CompletableFuture<>();
    request(method, url).subscribe(status -> outcome.complete("STATUS " + status),
        error -> outcome.complete(describe(error) + " on " + (Thread.currentThread().getName().contains("reactor-http")
            ? "the event loop" : Thread.currentThread().getName())));
    return outcome.get(20, TimeUnit.SECONDS);
  }

  public static String describe(Throwable e) {
    Throwable t = Exceptions.unwrap(e);
    List<String> chain = new ArrayList<>();
    Throwable innermost = t;
    for (Throwable c = t; c != null; c = c.getCause()) {
      chain.add(c.getClass().getName());
      innermost = c;
    }
    return "ERR " + String.join(" <- ", chain) + ": " + innermost.getMessage();
  }
}
