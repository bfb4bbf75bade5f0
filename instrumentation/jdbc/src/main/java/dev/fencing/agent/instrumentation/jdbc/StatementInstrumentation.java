package dev.fencing.agent.instrumentation.jdbc;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Every concrete or abstract implementation of java.sql.Statement (drivers and pools alike; pools are told apart at
 * run time by the re-entry guard, so a proxy and its driver statement count once). Abstract classes are included
 * because pools implement the execute methods in an abstract base (HikariCP's ProxyStatement).
 */
final class StatementInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "java/sql/";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named("java.sql.Statement")));
  }

  @Override
  public java.util.Set<String> superTypeNames() {
    return java.util.Set.of("java.sql.Statement");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(not(isAbstract()))
            .and(namedOneOf("execute", "executeUpdate", "executeLargeUpdate", "executeQuery"))
            .and(takesArgument(0, String.class)),
        StatementSqlAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract()))
            .and(namedOneOf("execute", "executeUpdate", "executeLargeUpdate", "executeQuery"))
            .and(takesArguments(0)),
        PreparedStatementAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(namedOneOf("executeBatch", "executeLargeBatch"))
            .and(takesArguments(0)),
        BatchAdvice.class);
  }
}
