package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import net.bytebuddy.asm.Advice;
import org.apache.hc.client5.http.RouteInfo;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;

/**
 * consumeResponse(response, entityDetails, context) of the async main exec's exchange handler: a 409 with
 * Fencing-Rejected is reported once per response; the response goes on unchanged. It is read on an I/O dispatcher
 * thread, not the thread that decided the attempt, so the refusal goes with the attempt's own target (the context's
 * route, as AsyncConnectExecAdvice decided it) and the lock of the pair its request carries (the context's request,
 * the one sent). Object-typed parameters: see ConnectExecAdvice.
 */
public final class AsyncResponseAdvice {
  private AsyncResponseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object response, @Advice.Argument(2) Object context) {
    if (((HttpResponse) response).getCode() == 409) {
      Header rejected = ((HttpResponse) response).getFirstHeader(HttpHook.REJECTED_HEADER);
      HttpClientContext c = HttpClientContext.adapt((HttpContext) context);
      HttpRequest request = c.getRequest();
      Header lock = request == null ? null : request.getFirstHeader(HttpHook.LOCK_HEADER);
      RouteInfo route = c.getHttpRoute();
      HttpHost target = route == null ? null : route.getTargetHost();
      HttpAttempt.responded(409, rejected == null ? null : rejected.getValue(), lock == null ? null : lock.getValue(),
          target == null ? null : target.getSchemeName(), target == null ? null : target.getHostName(),
          target == null ? -1 : target.getPort());
    }
  }
}
