package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.HttpAttempt;
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
    if (((HttpResponse) response).getCode() == 409) {
      Header rejected = ((HttpResponse) response).getFirstHeader(HttpHook.REJECTED_HEADER);
      HttpAttempt.responded(409, rejected == null ? null : rejected.getValue());
    }
  }
}
