package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.RequestHeaders;
import java.io.IOException;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;

/**
 * ConnectExec.execute(request, scope, chain), once per attempt. Decides for the attempt's method and target (the
 * route's target host: the origin, also behind a proxy); a blocked attempt throws before a connection is acquired, so
 * nothing reaches the network. Tagging sets (replaces) the pair on the request: the chain only ever sees copies of
 * the caller's request (InternalHttpClient copies it before the chain, retries and redirects copy the original
 * again), so the caller's object is never changed. On return, a 409 with Fencing-Rejected is reported, once per
 * response. The decision, the block and the header writes are {@link HttpAttempt} and {@link RequestHeaders}.
 * Parameters are typed Object: the advice class is loaded by the agent's loader, which cannot see the library, so
 * its signatures must not name library classes (the casts in the body are only resolved once inlined).
 */
public final class ConnectExecAdvice {
  private ConnectExecAdvice() {}

  @Advice.OnMethodEnter
  public static void enter(@Advice.Argument(0) Object request, @Advice.Argument(1) Object scope)
      throws IOException {
    try {
      ClassicHttpRequest r = (ClassicHttpRequest) request;
      HttpHost target = ((ExecChain.Scope) scope).route.getTargetHost();
      RequestHeaders.APACHE_HTTPCLIENT_5.tag(r,
          HttpAttempt.decide(r.getMethod(), target.getSchemeName(), target.getHostName(), target.getPort()));
    } catch (Throwable blockedOrAgentError) {
      HttpAttempt.failed(blockedOrAgentError); // rethrows the block; an agent error is counted, the attempt goes on
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(typing = Assigner.Typing.DYNAMIC) Object response) {
    if (response != null && ((ClassicHttpResponse) response).getCode() == 409) {
      Header rejected = ((ClassicHttpResponse) response).getFirstHeader(HttpHook.REJECTED_HEADER);
      HttpAttempt.responded(409, rejected == null ? null : rejected.getValue());
    }
  }
}
