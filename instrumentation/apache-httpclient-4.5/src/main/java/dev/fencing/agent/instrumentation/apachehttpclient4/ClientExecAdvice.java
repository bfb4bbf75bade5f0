package dev.fencing.agent.instrumentation.apachehttpclient4;

import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.RequestHeaders;
import java.io.IOException;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import org.apache.http.Header;
import org.apache.http.HttpHost;
import org.apache.http.HttpRequest;
import org.apache.http.HttpResponse;
import org.apache.http.conn.routing.HttpRoute;

/**
 * MainClientExec/MinimalClientExec.execute(route, request, context, execAware), once per attempt. Decides for the
 * attempt's method and target (the route's target host: the origin, also behind a proxy; the default route planner
 * has resolved its port); a blocked attempt throws before a connection is leased, so nothing reaches the network, and
 * the IOException travels up the chain to the application as any I/O failure does (RetryExec does not retry it, see
 * NoRetryWhenBlockedAdvice). Tagging sets (replaces) the pair on the request: the chain only works on an
 * HttpRequestWrapper, which holds its own copy of the caller's headers, so the caller's request object is never
 * changed, and a retry that passes the same wrapper down again gets its values replaced, not added. On return, a 409
 * with Fencing-Rejected is reported, once per response. The decision, the block and the header writes are
 * {@link HttpAttempt} and {@link RequestHeaders}. Parameters are typed Object: the advice class is loaded by the
 * agent's loader, which cannot see the library (the casts in the body are only resolved once inlined).
 */
public final class ClientExecAdvice {
  private ClientExecAdvice() {}

  @Advice.OnMethodEnter
  public static void enter(@Advice.Argument(0) Object route, @Advice.Argument(1) Object request)
      throws IOException {
    try {
      HttpHost target = ((HttpRoute) route).getTargetHost();
      String method = ((HttpRequest) request).getRequestLine().getMethod();
      RequestHeaders.APACHE_HTTPCLIENT_4.tag(request,
          HttpAttempt.decide(method, target.getSchemeName(), target.getHostName(), target.getPort()));
    } catch (Throwable blockedOrAgentError) {
      HttpAttempt.failed(blockedOrAgentError); // rethrows the block; an agent error is counted, the attempt goes on
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(typing = Assigner.Typing.DYNAMIC) Object response) {
    HttpResponse r = (HttpResponse) response;
    if (r != null && r.getStatusLine().getStatusCode() == 409) {
      Header rejected = r.getFirstHeader(HttpHook.REJECTED_HEADER);
      HttpAttempt.responded(409, rejected == null ? null : rejected.getValue());
    }
  }
}
