"""AWS errors as neuron-env errors: one paragraph saying what failed and what to do next.

Every AWS call runs inside :func:`aws_call`, which turns botocore's exceptions into
:class:`OperationFailed` (exit 1). Nothing from botocore reaches the user as a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)
from botocore.parsers import ResponseParserError

from neuron_env.errors import OperationFailed
from neuron_env.invocation import command

POLICY_COMMAND = ("launch-template", "policy")
"""The neuron-env command (its words after the program) that prints the IAM policy."""
_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthFailure"}
_THROTTLED = {
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
}
_CREDENTIALS = {"ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "RequestExpired"}


@contextmanager
def aws_call(action: str, policy: tuple[str, ...] = POLICY_COMMAND) -> Iterator[None]:
    """Run AWS calls for ``action`` (e.g. ``"ec2:CreateLaunchTemplate"``), translating errors.

    ``policy`` names the command that prints the IAM policy a denied user needs.
    """
    try:
        yield
    except ClientError as exc:
        raise translate_client_error(exc, action, policy) from exc
    except BotoCoreError as exc:
        raise translate_botocore_error(exc, action) from exc
    except ResponseParserError as exc:  # not a BotoCoreError: e.g. an HTML error page
        raise OperationFailed(
            f"AWS answered {action} with something that is not an AWS response.",
            hint="Check AWS_ENDPOINT_URL and proxy settings; --debug shows the answer.",
        ) from exc


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def cause_code(exc: OperationFailed) -> str | None:
    """The AWS error code behind a translated error, if AWS answered with one."""
    cause = exc.__cause__
    return error_code(cause) if isinstance(cause, ClientError) else None


def translate_client_error(
    exc: ClientError, action: str, policy: tuple[str, ...] = POLICY_COMMAND
) -> OperationFailed:
    """An error AWS answered with: denied, throttled, expired credentials or invalid input."""
    code = error_code(exc)
    message = str(exc.response.get("Error", {}).get("Message", "")).strip() or code
    if code in _DENIED:
        return OperationFailed(
            f"AWS denied {action} ({code}): {message}",
            hint=f"Grant it to the identity you are using. '{command(*policy)}' prints the IAM "
            "policy these commands need.",
        )
    if code in _THROTTLED:
        return OperationFailed(
            f"AWS throttled {action} ({code}) after botocore's retries: {message}",
            hint="Wait a minute and run the command again; it is safe to repeat.",
        )
    if code in _CREDENTIALS:
        return OperationFailed(
            f"AWS rejected the credentials for {action} ({code}): {message}",
            hint="Refresh them (e.g. 'aws sso login') and run the command again.",
        )
    return OperationFailed(
        f"AWS refused {action} ({code}): {message}",
        hint="Check the values given on the command line; run with --debug for the full error.",
    )


def translate_botocore_error(exc: BotoCoreError, action: str) -> OperationFailed:
    """An error before AWS answered: no credentials, no region, no connection."""
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return OperationFailed(
            f"No AWS credentials found for {action}.",
            hint="Configure them the usual way (AWS_PROFILE, 'aws configure', an instance "
            "profile or SSO) and run the command again.",
        )
    if isinstance(exc, NoRegionError):
        return OperationFailed(
            f"No AWS region is configured for {action}.",
            hint="Pass --region, or set AWS_REGION (or a region in your AWS profile).",
        )
    if isinstance(exc, ProfileNotFound):
        return OperationFailed(f"{exc}.", hint="Check --profile or AWS_PROFILE.")
    if isinstance(exc, EndpointConnectionError):
        return OperationFailed(
            f"Could not reach AWS for {action}: {exc}",
            hint="Check the network, proxy settings and the region.",
        )
    return OperationFailed(f"{action} failed before AWS answered: {exc}")
