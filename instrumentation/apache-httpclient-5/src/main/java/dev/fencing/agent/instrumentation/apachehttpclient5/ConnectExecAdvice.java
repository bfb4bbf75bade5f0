package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HttpHook;
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
 * response. Parameters are typed Object: the advice class is loaded by the agent's loader, which cannot see the
 * library, so its signatures must not name library classes (the casts in the body are only resolved once inlined).
 */
public final class ConnectExecAdvice {
  private ConnectExecAdvice() {}

  @Advice.OnMethodEnter
  public static void enter(@Advice.Argument(0) Object request, @Advice.Argument(1) Object scope)
      throws IOException {
    try {
      ClassicHttpRequest r = (ClassicHttpRequest) request;
      HttpHost target = ((ExecChain.Scope) scope).route.getTargetHost();
      Decision d = Fencing.http().decide(r.getMethod(), target.getSchemeName(), target.getHostName(), target.getPort());
      if (d.isBlock()) {
        throw new FencingBlockedException(Channel.HTTP, d);
      }
      if (d.isTag()) {
        String[] h = d.httpHeaders();
        for (int i = 0; i < h.length; i += 2) {
          r.setHeader(h[i], h[i + 1]);
        }
        if (d.grant() == null) {
          r.removeHeaders(HttpHook.GRANT_HEADER); // a copied request's grant is not this token's
        }
      }
    } catch (IOException blocked) {
      throw blocked; // FencingBlockedException: nothing else in here throws an IOException
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.HTTP, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(typing = Assigner.Typing.DYNAMIC) Object response) {
    if (response != null) {
      ClassicHttpResponse r = (ClassicHttpResponse) response;
      if (r.getCode() == 409) {
        Header h = r.getFirstHeader(HttpHook.REJECTED_HEADER);
        Fencing.http().responded(409, h == null ? null : h.getValue());
      }
    }
  }
}
