#!/bin/sh
# A stand-in for a model, used to record support_reply.test.cassette.jsonl offline:
#   TASKLISP_PROVIDER_COMMAND="sh examples/stand_in_model.sh" \
#     tasklisp --provider command test --record examples/support_reply.test.sexp
# Record with a real model the same way: tasklisp --provider openai … test --record …
prompt=$(cat)
case "$TASKLISP_TASK" in
  classify-ticket)
    case "$prompt" in
      *crash*) echo '{"category": "bug", "urgent": true}' ;;
      *charged*) echo '{"category": "billing", "urgent": false}' ;;
      *) echo '{"category": "question", "urgent": false}' ;;
    esac ;;
  draft-reply)
    echo "Thank you for reporting this, and sorry for the trouble. We can reproduce the crash on the settings page and our engineers are working on a fix; we will write again as soon as it is released." ;;
  expect-judge)
    echo '{"pass": true, "reason": "The reply thanks the customer, apologises, names the crash and gives no date."}' ;;
  *) echo "$prompt" ;;
esac
