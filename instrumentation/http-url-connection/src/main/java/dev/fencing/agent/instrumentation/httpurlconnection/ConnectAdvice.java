package dev.fencing.agent.instrumentation.httpurlconnection;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.ReentryGuard;
import java.net.HttpURLConnection;
import java.net.URL;
import java.io.IOException;
import net.bytebuddy.asm.Advice;

/**
 * On connect, getOutputStream and getInputStream of the JDK's HttpURLConnection: the first of them on a connection
 * that is not connected yet decides, and tags through setRequestProperty, which is still allowed at that point (so
 * never "Already connected"); a blocked request throws before any byte is written. Nested calls (getOutputStream
 * calling connect) are skipped by the re-entry guard. Inlined into java.base: bootstrap and JDK classes only.
 */
public final class ConnectAdvice {
  private ConnectAdvice() {}

  @Advice.OnMethodEnter
  public static boolean enter(@Advice.This Object self,
      @Advice.FieldValue("connected") boolean connected, @Advice.FieldValue("connecting") boolean connecting)
      throws IOException {
    // Returns whether the guard was entered (exit leaves it then). Only the deliberate block leaves as an exception.
    boolean guarded = false;
    try {
      boolean outermost = ReentryGuard.enter();
      guarded = true;
      if (!outermost || connected || connecting) {
        return true;
      }
      HttpURLConnection connection = (HttpURLConnection) self; // typed Object: see ResponseCodeAdvice
      URL url = connection.getURL();
      Decision d = Fencing.http().decide(connection.getRequestMethod(), url.getProtocol(), url.getHost(), url.getPort());
      if (d.isBlock()) {
        ReentryGuard.exit();
        guarded = false;
        throw new FencingBlockedException(Channel.HTTP, d);
      }
      if (d.isTag()) {
        String[] h = d.httpHeaders();
        for (int i = 0; i < h.length; i += 2) {
          connection.setRequestProperty(h[i], h[i + 1]); // set replaces: carried exactly once
        }
      }
      return true;
    } catch (IOException blocked) {
      throw blocked; // FencingBlockedException: nothing else in here throws an IOException
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.HTTP, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
      return guarded;
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean entered) {
    if (entered) {
      ReentryGuard.exit();
    }
  }
}
