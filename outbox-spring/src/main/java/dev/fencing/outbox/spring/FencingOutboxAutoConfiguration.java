package dev.fencing.outbox.spring;

import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * A {@link FencingOutbox} on the application's DataSource, writing to the first table of {@code fencing.outbox.table}
 * (default {@code outbox}): the same property the agent's relay reads, so one setting (a system property, an
 * environment variable {@code FENCING_OUTBOX_TABLE}) names the table for both.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class)
@ConditionalOnClass({DataSourceUtils.class, DataSource.class})
@ConditionalOnSingleCandidate(DataSource.class)
public class FencingOutboxAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  public FencingOutbox fencingOutbox(DataSource dataSource,
      @Value("${fencing.outbox.table:outbox}") String tables) {
    return new FencingOutbox(dataSource, tables.split(",")[0].trim());
  }
}
