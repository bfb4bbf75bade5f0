package dev.fencing.agent.instrumentation.apachehttpclient4;

import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.http.HttpFencing;
import java.util.List;

/**
 * Apache HttpClient 4.5.x (4.5 to 4.5.14 tested), classic, as built by HttpClients / HttpClientBuilder (the client the
 * AWS SDK v2's apache-client and most 4.x applications use), including HttpClients.createMinimal. Switch:
 * fencing.instrumentation.apache-httpclient-4.enabled.
 *
 * <p>The hook sits on the last element of the client's exec chain (MainClientExec, or MinimalClientExec), below
 * redirects and retries, so it decides and tags every attempt that may go out, on the per-attempt wrapper of the
 * request the chain works on. The deprecated pre-4.3 clients (DefaultHttpClient and the other AbstractHttpClient
 * subclasses) have no exec chain and are not hooked; neither is the separate HttpAsyncClient 4.x (httpasyncclient).
 */
public final class ApacheHttpClient4InstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "apache-httpclient-4";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ClientExecInstrumentation(), new RetryHandlerInstrumentation());
  }

  @Override
  public void install(AgentContext context) {
    HttpFencing.install(context);
  }
}
