package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.HttpHook;
import net.bytebuddy.asm.Advice;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpResponse;

/**
 * consumeResponse(response, entityDetails, context) of the async main exec's exchange handler: a 409 with
 * Fencing-Rejected is reported once per response; the response goes on unchanged. Object-typed parameter: see
 * ConnectExecAdvice.
 */
public final class AsyncResponseAdvice {
  private AsyncResponseAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter(@Advice.Argument(0) Object response) {
    HttpResponse r = (HttpResponse) response;
    if (r.getCode() == 409) {
      Header h = r.getFirstHeader(HttpHook.REJECTED_HEADER);
      Fencing.http().responded(409, h == null ? null : h.getValue());
    }
  }
}
