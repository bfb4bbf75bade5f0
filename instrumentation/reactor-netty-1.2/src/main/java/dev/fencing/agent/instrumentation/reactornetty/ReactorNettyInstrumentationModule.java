package dev.fencing.agent.instrumentation.reactornetty;

import static dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation.method;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.NamedTypeInstrumentation;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;
import java.util.function.Consumer;

/**
 * Reactor Netty's HttpClient (reactor-netty-http 1.2.16 to 1.3.7 tested), alone or under Spring WebClient's
 * ReactorClientHttpConnector. Switch: fencing.instrumentation.reactor-netty.enabled.
 *
 * <p>Three hooks on HttpClientConnect, the client every HttpClient configuration becomes when it connects: its
 * {@code connect()} (on the thread that assembles the request) puts that thread's inbound token or section scope into
 * the Reactor context of the connection; {@code HttpClientHandler.requestWithBody} (on the event loop, once per
 * attempt: the first, each redirect, each retry after a reset connection) decides under that context, fails a blocked
 * attempt before the application's send function and before anything of the request is written, and tags the request;
 * {@code HttpIOHandlerObserver.onStateChange} reports a fence's 409 on each response. Only public Reactor Netty and
 * reactor-core types are named; Netty's are reached through {@code RequestHeaders} and {@code ReactorNettyHttp}.
 */
public final class ReactorNettyInstrumentationModule implements InstrumentationModule {
  private static final String CONNECT = "reactor.netty.http.client.HttpClientConnect";
  private static final String LIBRARY = "Reactor Netty";

  @Override
  public String name() {
    return "reactor-netty";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        // connect(): every response method of the client (response, responseSingle, responseContent,
        // responseConnection, websockets) builds its Mono from it, on the thread that assembles the request (for
        // WebClient, the thread that subscribes to the exchange): the one place that thread is known before the
        // attempts move to an event loop.
        new NamedTypeInstrumentation(LIBRARY, CONNECT, new ConnectMethods()),
        // HttpClientHandler.requestWithBody(HttpClientOperations): once per attempt (the first, each redirect, each
        // retry of a request whose pooled connection was reset) when the attempt's connection is ready, on its event
        // loop, before the application's send function runs and before anything of the request is written. The
        // same method in 1.0 through 1.3.
        new NamedTypeInstrumentation(LIBRARY, CONNECT + "$HttpClientHandler", new HttpClientHandlerMethods()),
        // HttpIOHandlerObserver.onStateChange(Connection, State): the observer of each attempt's connection that
        // completes the attempt with its response (HttpClientState.RESPONSE_RECEIVED), once per response.
        new NamedTypeInstrumentation(LIBRARY, CONNECT + "$HttpIOHandlerObserver", new HttpIOHandlerObserverMethods()));
  }

  // The advice of each class, applied when the class loads; classes of their own rather than lambdas, which premain
  // would spin (one class each, on every start).

  /** HttpClientConnect. */
  private static final class ConnectMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("connect", 0).and(returns(named("reactor.core.publisher.Mono"))), ConnectAdvice.class);
    }
  }

  /** HttpClientConnect$HttpClientHandler. */
  private static final class HttpClientHandlerMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("requestWithBody", 1), RequestWithBodyAdvice.class);
    }
  }

  /** HttpClientConnect$HttpIOHandlerObserver. */
  private static final class HttpIOHandlerObserverMethods implements Consumer<TypeInstrumentation.Transformer> {
    @Override
    public void accept(TypeInstrumentation.Transformer t) {
      t.applyAdvice(method("onStateChange", 2), ResponseReceivedAdvice.class);
    }
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
  }
}
