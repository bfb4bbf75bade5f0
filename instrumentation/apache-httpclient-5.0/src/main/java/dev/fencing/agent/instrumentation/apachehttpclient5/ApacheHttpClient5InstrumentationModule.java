package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;

/**
 * Apache HttpClient 5.x (5.0 to 5.6 tested), classic and async, as built by HttpClients / HttpAsyncClients and their
 * builders. Switch: fencing.instrumentation.apache-httpclient-5.enabled.
 *
 * <p>The hook sits on the connect step of the client's exec chain, below redirects, retries and the auth loop, so it
 * decides and tags every attempt that may go out, on the per-attempt copy of the request the chain works on. The
 * "minimal" clients (HttpClients.createMinimal, HttpAsyncClients.createMinimal/createHttp2Minimal) have no exec chain
 * and are not hooked.
 */
public final class ApacheHttpClient5InstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "apache-httpclient-5";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ConnectExecInstrumentation(), new AsyncConnectExecInstrumentation(),
        new AsyncExchangeHandlerInstrumentation(), new RetryStrategyInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
  }
}
