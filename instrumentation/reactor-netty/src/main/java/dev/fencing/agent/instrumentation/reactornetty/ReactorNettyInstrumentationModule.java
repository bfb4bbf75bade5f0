package dev.fencing.agent.instrumentation.reactornetty;

import dev.fencing.agent.instrumentation.AgentContext;
import dev.fencing.agent.instrumentation.InstrumentationModule;
import dev.fencing.agent.instrumentation.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;

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
  @Override
  public String name() {
    return "reactor-netty";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new HttpClientConnectInstrumentation(), new HttpClientHandlerInstrumentation(),
        new ResponseObserverInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
  }
}
